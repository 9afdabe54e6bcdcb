#!/usr/bin/env bash
# Prove the Dockerfile without a Docker engine: run its build and start commands in a clean temporary
# copy, start the built bot in HTTP mode with fake credentials while Slack is unreachable, and check
# /healthz, /readyz (503 naming slack, then ready once a stand-in Slack answers), /metrics, the image's
# HEALTHCHECK command, a graceful SIGTERM (exit 0) and `npm run keys:rotate:prod` on production files.
#
#   scripts/docker-smoke.sh           the whole smoke test (about a minute)
#   scripts/docker-smoke.sh --check   only check that the commands below are the Dockerfile's
#
# EDGEOPS_SMOKE_INSTALL=copy|ci  how the build stage's `npm ci` is stood in for: `ci` runs it for real
#   (slow: compiles better-sqlite3); `copy` (the default when node_modules exists) copies this checkout's
#   node_modules, installed by `npm ci` from the same lockfile. `npm prune --omit=dev` always runs for
#   real, so the runtime starts with production dependencies only.
# With a working Docker engine (docker info), EDGEOPS_SMOKE_DOCKER=1 also builds and runs the image.
# hadolint lints the Dockerfile when it is installed.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DOCKERFILE="$ROOT/Dockerfile"

# The Dockerfile's commands this script runs, in order. --check fails if one is not in the Dockerfile.
INSTALL_STEP="npm ci --no-audit --no-fund"
BUILD_STEP="npm run build"
PRUNE_STEP="npm prune --omit=dev --no-audit --no-fund"
START_CMD='CMD ["node", "dist/main.js"]'
HEALTH_SNIPPET="fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ROTATE_SCRIPT='"keys:rotate:prod": "node dist/rotate-keys.js"'
BUILD_FILES=(package.json package-lock.json tsconfig.json tsconfig.build.json src)
RUNTIME_FILES=(package.json node_modules dist)

say() { printf 'docker-smoke: %s\n' "$*"; }
fail() { printf 'docker-smoke: FAIL: %s\n' "$*" >&2; exit 1; }

check_dockerfile() {
  local line
  for line in "RUN $INSTALL_STEP" "RUN $BUILD_STEP" "RUN $PRUNE_STEP" "$START_CMD"; do
    grep -qxF -- "$line" "$DOCKERFILE" || fail "the Dockerfile has no line \`$line\`: keep it and this script in step"
  done
  grep -qF -- "$HEALTH_SNIPPET" "$DOCKERFILE" || fail "the Dockerfile's HEALTHCHECK is not the one this script runs"
  grep -qxF -- "COPY package.json package-lock.json ./" "$DOCKERFILE" || fail "Dockerfile: package files COPY changed"
  grep -qxF -- "COPY tsconfig.json tsconfig.build.json ./" "$DOCKERFILE" || fail "Dockerfile: tsconfig COPY changed"
  grep -qxF -- "COPY src ./src" "$DOCKERFILE" || fail "Dockerfile: src COPY changed"
  local f
  for f in "${RUNTIME_FILES[@]}"; do
    grep -qE -- "^COPY --from=build /app/$f \./" "$DOCKERFILE" || fail "Dockerfile: runtime stage no longer copies $f"
  done
  grep -qF -- "$ROTATE_SCRIPT" "$ROOT/package.json" || fail "package.json has no $ROTATE_SCRIPT script"
  if command -v hadolint >/dev/null 2>&1; then
    hadolint "$DOCKERFILE" || fail "hadolint found problems in the Dockerfile"
    say "hadolint: clean"
  else
    say "hadolint not installed: lint skipped"
  fi
  say "the Dockerfile and this script agree"
}

check_dockerfile
[[ "${1:-}" == "--check" ]] && exit 0

WORK="$(mktemp -d "${TMPDIR:-/tmp}/edgeops-smoke.XXXXXX")"
BOT_PID=""
SLACK_PID=""
cleanup() {
  if [[ -n "$BOT_PID" ]] && kill -0 "$BOT_PID" 2>/dev/null; then kill -KILL "$BOT_PID" 2>/dev/null || true; fi
  if [[ -n "$SLACK_PID" ]] && kill -0 "$SLACK_PID" 2>/dev/null; then kill -KILL "$SLACK_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- build stage (WORKDIR /app) ---------------------------------------------------------------------
BUILD="$WORK/build"
mkdir -p "$BUILD"
say "build stage in $BUILD"
for f in "${BUILD_FILES[@]}"; do cp -a "$ROOT/$f" "$BUILD/"; done
MODE="${EDGEOPS_SMOKE_INSTALL:-}"
[[ -z "$MODE" ]] && { [[ -d "$ROOT/node_modules" ]] && MODE=copy || MODE=ci; }
if [[ "$MODE" == "ci" ]]; then
  (cd "$BUILD" && $INSTALL_STEP)
else
  say "standing in for \`$INSTALL_STEP\` with a copy of $ROOT/node_modules"
  cp -a "$ROOT/node_modules" "$BUILD/node_modules"
fi
(cd "$BUILD" && $BUILD_STEP)
[[ -f "$BUILD/dist/main.js" ]] || fail "npm run build did not produce dist/main.js"
[[ -f "$BUILD/dist/rotate-keys.js" ]] || fail "npm run build did not produce dist/rotate-keys.js"
(cd "$BUILD" && $PRUNE_STEP)
for dev in typescript vitest @biomejs/biome tsx esbuild; do
  [[ ! -e "$BUILD/node_modules/$dev" ]] || fail "$dev is still in node_modules after the prune"
done

# --- runtime stage: only package.json, production node_modules and dist -----------------------------
APP="$WORK/app"
mkdir -p "$APP" "$WORK/data"
for f in "${RUNTIME_FILES[@]}"; do cp -a "$BUILD/$f" "$APP/"; done
rm -rf "$BUILD"

free_port() { node -e 's=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
PORT="$(free_port)"
SLACK_PORT="$(free_port)"
KEY_1="$(node -e 'console.log(Buffer.alloc(32,1).toString("base64"))')"
KEY_2="$(node -e 'console.log(Buffer.alloc(32,2).toString("base64"))')"
say "starting node dist/main.js on port $PORT (HTTP mode, fake credentials, NODE_ENV=production, Slack unreachable)"
(
  cd "$APP"
  exec env -i PATH="$PATH" HOME="$WORK" \
    NODE_ENV=production PORT="$PORT" DATA_DIR="$WORK/data" LOG_LEVEL=info \
    SLACK_SIGNING_SECRET=smoke-signing-secret SLACK_BOT_TOKEN=xoxb-smoke-0000 \
    SLACK_API_URL="http://127.0.0.1:$SLACK_PORT/api/" EDGE_API_URL=http://127.0.0.1:9 \
    ENCRYPTION_KEY="$KEY_1" \
    SHUTDOWN_TIMEOUT_MS=2000 \
    node dist/main.js
) >"$WORK/bot.log" 2>&1 &
BOT_PID=$!

get() { node -e 'fetch(process.argv[1]).then(async r=>{process.stdout.write(await r.text());process.exit(r.status===200?0:1)},()=>process.exit(2))' "http://127.0.0.1:$PORT$1"; }
for _ in $(seq 1 100); do
  get /healthz >/dev/null 2>&1 && break
  kill -0 "$BOT_PID" 2>/dev/null || { cat "$WORK/bot.log" >&2; fail "the bot exited during start-up"; }
  sleep 0.2
done
[[ "$(get /healthz)" == "ok" ]] || { cat "$WORK/bot.log" >&2; fail "/healthz did not answer ok"; }
say "/healthz: ok"
# Nothing listens on SLACK_PORT yet: the bot keeps running, not ready, naming slack.
NOT_READY="$(get /readyz)" && { cat "$WORK/bot.log" >&2; fail "/readyz is ready while Slack is unreachable"; }
[[ "$NOT_READY" == *'"failing":["slack"]'* ]] || fail "/readyz does not name slack: $NOT_READY"
say "/readyz while Slack is unreachable: 503 naming slack"
# A stand-in Slack Web API that answers auth.test; the bot's token check retries and finds it.
node -e 'require("http").createServer((q,r)=>{r.setHeader("content-type","application/json");r.end(JSON.stringify({ok:true,user_id:"UBOT",bot_id:"BBOT",team_id:"T0"}))}).listen(Number(process.argv[1]),"127.0.0.1")' "$SLACK_PORT" &
SLACK_PID=$!
disown "$SLACK_PID"
READY=""
for _ in $(seq 1 150); do
  READY="$(get /readyz)" && break
  kill -0 "$BOT_PID" 2>/dev/null || { cat "$WORK/bot.log" >&2; fail "the bot exited while Slack was unreachable"; }
  sleep 0.2
done
[[ "$READY" == *'"status":"ready"'* ]] || { cat "$WORK/bot.log" >&2; fail "/readyz is not ready once Slack answers: $READY"; }
say "/readyz once Slack answers: $READY"
get /metrics | grep -q '^edgeops_process_cpu_user_seconds_total ' || fail "/metrics lacks the process metrics"
say "/metrics: ok"
(cd "$APP" && PORT="$PORT" node -e "$HEALTH_SNIPPET") || fail "the image's HEALTHCHECK command failed"
say "HEALTHCHECK command: ok"

kill -TERM "$BOT_PID"
STATUS=0
wait "$BOT_PID" || STATUS=$?
BOT_PID=""
[[ "$STATUS" == 0 ]] || { cat "$WORK/bot.log" >&2; fail "SIGTERM: exit status $STATUS, not 0"; }
grep -q '"edgeops stopped"' "$WORK/bot.log" || fail "no graceful-stop log line after SIGTERM"
say "SIGTERM: graceful stop, exit 0"

# keys:rotate on production files only, as `docker exec <container> npm run keys:rotate:prod` runs it.
ROTATED="$(cd "$APP" && env -i PATH="$PATH" HOME="$WORK" DATA_DIR="$WORK/data" \
  ENCRYPTION_KEYS="new:$KEY_2,old:$KEY_1" npm run --silent keys:rotate:prod)" \
  || fail "npm run keys:rotate:prod failed: $ROTATED"
[[ "$ROTATED" == 'Re-encrypted 0 secrets under master key "new"'* ]] || fail "keys:rotate:prod said: $ROTATED"
say "keys:rotate:prod: $ROTATED"

if [[ "${EDGEOPS_SMOKE_DOCKER:-0}" == 1 ]] && docker info >/dev/null 2>&1; then
  say "docker build"
  docker build -t edgeops:smoke "$ROOT"
  # Slack unreachable inside the container (a real slack.com would refuse the fake token and stop it).
  CID="$(docker run -d -p "127.0.0.1:$PORT:3000" -e SLACK_SIGNING_SECRET=smoke -e SLACK_BOT_TOKEN=xoxb-smoke \
    -e SLACK_API_URL=http://127.0.0.1:9/api/ -e ENCRYPTION_KEY="$KEY_1" edgeops:smoke)"
  for _ in $(seq 1 50); do get /healthz >/dev/null 2>&1 && break; sleep 0.2; done
  [[ "$(get /healthz)" == "ok" ]] || { docker logs "$CID" >&2; docker rm -f "$CID" >/dev/null; fail "image: /healthz"; }
  docker exec -e ENCRYPTION_KEY= -e ENCRYPTION_KEYS="new:$KEY_2,old:$KEY_1" "$CID" npm run --silent keys:rotate:prod \
    || { docker rm -f "$CID" >/dev/null; fail "image: npm run keys:rotate:prod"; }
  docker stop -t 15 "$CID" >/dev/null
  [[ "$(docker inspect -f '{{.State.ExitCode}}' "$CID")" == 0 ]] || fail "image: exit status after docker stop"
  docker rm "$CID" >/dev/null
  say "docker image: /healthz ok, stops with exit 0"
fi
say "passed"
