# Image for both roles of the venue: the API (`npm start`) and the worker (`node bin/ptv.mjs worker`), both with the
# venue's Node flags (bin/node-flags.mjs).
# TypeScript runs through tsx; the only build step is the dashboard's bundle (Vite); see docs/operations.md.
FROM node:20-bookworm-slim

WORKDIR /app
RUN chown node:node /app
USER node

# Dependencies first: this layer is rebuilt only when the lock file changes.
COPY --chown=node:node package.json package-lock.json ./
RUN npm ci && npm cache clean --force

COPY --chown=node:node . .
# The dashboard's bundle (the `npm ci` above ran before the sources were copied, so it built nothing).
RUN npm run build:dashboard

ENV HOST=0.0.0.0 \
    PORT=8000
EXPOSE 8000

# node:*-slim has no curl; Node 20's fetch checks the health endpoint instead.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=5 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

CMD ["npm", "start"]
