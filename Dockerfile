# One small production image for both apps: `docker run kigo gateway` or `docker run kigo core`.
# Node.js 24 (active LTS; Node 20 reached end of life in April 2026). .ci/run runs the
# suite on Node 24 as well as on the machine's Node 20.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bin ./bin
# The server alone: bench/ (compiled by `npm run build` when present) and test/ are not
# copied in, and the runtime stage takes dist/src and dist/vendor only.
RUN npm run build

FROM node:24-bookworm-slim
ENV NODE_ENV=production KIGO_DATA_DIR=/var/lib/kigo
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/vendor ./dist/vendor
COPY config ./config
COPY bin ./bin
# The developer guide (/developers) shows these samples.
COPY examples/guide ./examples/guide
RUN mkdir -p /var/lib/kigo && chown node:node /var/lib/kigo
USER node
# 8080 public, 9090 operator (gateway); 8081 public, 9091 metrics (core).
EXPOSE 8080 8081 9090 9091
# Memory: semi-spaces of 16 MiB, and the old generation grown by half its live size before
# the next full collection instead of up to fourfold (the gateway peaks at about 140 MB
# under load instead of about 200 MB). No allocation-site pretenuring: otherwise V8 has
# objects of sites whose first objects (made at start) all lived allocated old from then
# on, and the core's per-request objects from such sites keep young ones alive until a
# full collection (docs/performance.md#memory-flags). bench/topology.ts runs the apps the
# same way; test/bench/production-flags.test.ts checks that Node knows every flag.
ENTRYPOINT ["node", "--max-semi-space-size=16", "--heap-growing-percent=50", "--no-allocation-site-pretenuring", "dist/src/main.js"]
CMD ["gateway"]
