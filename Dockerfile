# Build stage: the API bundle, the console and the agent executable.
FROM node:20-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN NX_DAEMON=false NX_TUI=false NX_NO_CLOUD=true npx nx run-many -t build --outputStyle=static

# Runtime: production dependencies and the built output only.
FROM node:20-bookworm-slim
# zstd: the agent executable reaches hosts as a zstd stream (a third of its 83 MiB); without it, uncompressed over SFTP.
RUN apt-get update && apt-get install -y --no-install-recommends zstd && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production PORT=4000 CONSOLE_DIR=/app/dist/apps/console/browser
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY --from=build /src/dist ./dist
# 4000: people (console, API); 4443: install agents (AGENT_PORT); 9090: /metrics (METRICS_PORT). The
# last two listen only when their variables are set (deploy/base/config.yaml sets them).
EXPOSE 4000 4443 9090
USER node
CMD ["node", "--enable-source-maps", "dist/apps/api/main.js"]
