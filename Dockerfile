# syntax=docker/dockerfile:1
# The server alone (no CLI, no dev dependencies), run as an unprivileged user with DATA_DIR on a volume:
# the embedded PostgreSQL under /data/postgres by default, or DATABASE_URL. docs/deployment.md says how.
ARG NODE_IMAGE=node:24-bookworm-slim

# The workspace's manifests, so that the dependency layers below are reused while only sources change.
FROM ${NODE_IMAGE} AS manifests
RUN npm install -g pnpm@10.34.9 --no-fund --no-audit
WORKDIR /app
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
COPY patches patches
COPY packages/server/package.json packages/server/
COPY packages/sdk/package.json packages/sdk/
COPY packages/cli/package.json packages/cli/

FROM manifests AS build
RUN pnpm install --frozen-lockfile
COPY tsconfig.base.json ./
COPY packages/sdk packages/sdk
COPY packages/server packages/server
RUN pnpm --filter @bandcollab/server... build

FROM manifests AS production-dependencies
RUN pnpm install --frozen-lockfile --prod --filter @bandcollab/server...

FROM ${NODE_IMAGE}
# tini as PID 1 forwards signals to the server and reaps what it did not start itself (a PostgreSQL worker whose
# parent died would otherwise stay a zombie: Node waits only for its own children).
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
# A fresh named volume takes the owner and mode of /data from the image: the server's user, 0700.
RUN groupadd --system --gid 10001 bandcollab \
  && useradd --system --uid 10001 --gid bandcollab --home-dir /data --shell /usr/sbin/nologin bandcollab \
  && mkdir /data && chown bandcollab:bandcollab /data && chmod 0700 /data
WORKDIR /app
COPY --from=production-dependencies /app ./
COPY --from=build /app/packages/sdk/dist packages/sdk/dist
COPY --from=build /app/packages/server/dist packages/server/dist
COPY packages/server/migrations packages/server/migrations
ENV HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
USER bandcollab
VOLUME /data
EXPOSE 3000
# The first start initialises the embedded database (about 10 s on a small machine): the start period covers it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/api/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# docker stop's SIGTERM reaches the server, which lets uploads finish and stops the embedded database last.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "packages/server/dist/main.js"]
