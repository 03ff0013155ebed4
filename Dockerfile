# syntax=docker/dockerfile:1
# a2a-egress: build with the full toolchain, run with production deps only.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    A2A_EGRESS_CONFIG=/etc/a2a-egress/gateway.yaml \
    A2A_EGRESS_PORT=8080
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY config/gateway.yaml /etc/a2a-egress/gateway.yaml
# A container listens on all interfaces of its own network namespace; callers
# reach it through the pod/sidecar network. Mount your own config over the file above.
# The base image's `node` user, by number so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "dist/healthcheck.js"]
CMD ["sh", "-c", "exec node dist/cli.js --config \"$A2A_EGRESS_CONFIG\" --host 0.0.0.0 --port \"$A2A_EGRESS_PORT\""]
