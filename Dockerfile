# edgeops: one image for Socket Mode, HTTP and OAuth installs (the environment picks the transport).
#   docker build -t edgeops .
#   docker run -d -p 3000:3000 -v edgeops-data:/data --env-file .env edgeops
#   docker exec <container> npm run keys:rotate:prod   (re-encrypt stored secrets after a master-key change)
# scripts/docker-smoke.sh runs this file's build and start commands without Docker (CI has no engine);
# test/ops/docker.test.ts keeps the two in step.

ARG NODE_IMAGE=node:22-bookworm-slim

# --- build: compile TypeScript, then drop dev dependencies ------------------------------------------
FROM ${NODE_IMAGE} AS build
# better-sqlite3 is a native addon: a compiler in case no prebuilt binary matches.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build
RUN npm prune --omit=dev --no-audit --no-fund

# --- runtime: production dependencies and the compiled JavaScript only, as a non-root user ----------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The official image's "node" user (uid 1000) owns the data volume; the code stays root-owned.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
