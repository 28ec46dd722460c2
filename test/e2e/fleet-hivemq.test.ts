// The fleet's scenarios (fleet-scenarios.ts) against HiveMQ CE.
import { sharedHivemq } from '../harness/hivemq.js';
import { fleetScenarios } from './fleet-scenarios.js';

fleetScenarios('hivemq ce', sharedHivemq, { perSessionQueues: false, inOrder: false });
