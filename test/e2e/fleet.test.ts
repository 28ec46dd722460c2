// The fleet's scenarios (fleet-scenarios.ts) against Debian 12's Mosquitto 2.0.11.
import { sharedMosquitto } from '../harness/mosquitto.js';
import { fleetScenarios } from './fleet-scenarios.js';

fleetScenarios('mosquitto 2.0.11', sharedMosquitto, { perSessionQueues: true, inOrder: true });
