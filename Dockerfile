# syntax=docker/dockerfile:1
# a2a-egress: build with the full toolchain, run with production deps only.
# Node 24 is the current LTS line (supported to April 2028); the code itself
# runs on Node >= 20.19, which is what the tests use.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:24-bookworm-slim AS runtime
# The config file decides the ports (server.port, server.opsPort); the gateway and
# its HEALTHCHECK read the same file by the same rule (src/config/listen.ts).
# `docker run -e A2A_EGRESS_PORT=N` moves the caller port for both.
# NODE_OPTIONS: a 32 MiB young generation, about a quarter less CPU per call than V8's default (see
# src/cluster/young-generation.ts); keep the flag if you set NODE_OPTIONS yourself.
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=32 \
    A2A_EGRESS_CONFIG=/etc/a2a-egress/gateway.yaml
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY config/gateway.yaml config/gateway.schema.json /etc/a2a-egress/
# A container listens on all interfaces of its own network namespace; callers
# reach it through the pod/sidecar network. Mount your own config over the file above.
# The base image's `node` user, by number so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
# server.port of the bundled config.
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "dist/healthcheck.js"]
# Exec form: node is PID 1 and gets SIGTERM itself (it drains, then exits 0).
CMD ["node", "dist/cli.js", "--host", "0.0.0.0"]
