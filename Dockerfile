# weir container image: build stage compiles TypeScript; the runtime stage holds only what runs.
#
# Node: the exact version in .node-version, the Active LTS line (26) that CI runs the suite on
# (.ci/run; test/dockerfile.test.ts checks that both FROM lines name it). Pinned by tag only: a
# digest (node:…@sha256:…) would pin the bytes too, but weir is developed where no registry of
# images can be reached, so a digest written here could not be checked; add one where it can.
FROM node:26.12.1-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
# npm ci's postinstall applies these fixes to dependencies (patches/README.md).
COPY patches ./patches
COPY src ./src
COPY bin ./bin
# The console's page (console/), bundled by `npm run build` into dist/console/ with esbuild.
COPY console ./console
# npm ci runs `prepare` (npm run build: tsc, then the console's page). pulsar-client's install
# downloads its prebuilt native library here, where the build has network access; it is optional,
# so the image still builds without it.
# The prune drops the devDependencies, among them the demo's embedded broker and database (aedes,
# PGlite): `weir demo` in the image says how to install them.
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:26.12.1-bookworm-slim
ENV NODE_ENV=production WEIR_LOG_LEVEL=info
# What weir writes lives in WEIR_DATA_DIR, the one directory its user owns: the shipped weir.yaml
# puts dead_letter.fallback_file there (${WEIR_DATA_DIR:-.}/...). /app, where weir.yaml is, stays
# root's and read-only to weir. A volume, so the file outlives the container.
ENV WEIR_DATA_DIR=/var/lib/weir
RUN mkdir -p /var/lib/weir && chown node:node /var/lib/weir
VOLUME ["/var/lib/weir"]
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY migrations ./migrations
# spb_decode's Sparkplug B definition, read at run time (src/schemas/sparkplug.ts).
COPY src/schemas/sparkplug_b.proto ./src/schemas/sparkplug_b.proto
COPY rules ./rules
COPY weir.yaml ./weir.yaml
USER node
EXPOSE 9464
# `weir health` on ./weir.yaml (/app/weir.yaml): /healthz at its http.host and http.port, over
# HTTPS when http.tls is set (src/cli/health.ts). A config mounted elsewhere (docker-compose.yml:
# /etc/weir/weir.yaml) needs the same path here: `--health-cmd 'node bin/healthcheck.js -c …'`.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "bin/healthcheck.js"]
# SIGTERM: stop reading, store and ack what was read, disconnect keeping the session.
STOPSIGNAL SIGTERM
# The V8 flags of bin/weir.js's first line (why: there); node ignores a script's shebang.
ENTRYPOINT ["node", "--max-semi-space-size=8", "--heap-growing-percent=100", "bin/weir.js"]
CMD ["run", "--config", "/app/weir.yaml"]
