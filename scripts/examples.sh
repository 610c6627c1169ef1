#!/usr/bin/env bash
# Installs the packed floodgate tarball into a fresh directory next to a copy of examples/,
# type-checks them and runs each against REDIS_URL (default redis://127.0.0.1:6379), once per
# ioredis major the peer range names. Usage: scripts/examples.sh [ioredis version ...]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(6.0.0 5.11.1)
work="$(mktemp -d "${TMPDIR:-/tmp}/floodgate-examples-XXXXXX")"
trap 'rm -rf "$work"' EXIT

(cd "$repo/packages/floodgate" && npm pack --silent --pack-destination "$work" >/dev/null)
tarball="$(ls "$work"/floodgate-*.tgz)"
listing="$(tar -tzf "$tarball")"
echo "packed $(basename "$tarball"): $(wc -l <<<"$listing") files"
for file in README.md LICENSE package.json dist/index.js dist/index.d.ts; do
  grep -qx "package/$file" <<<"$listing" || { echo "the tarball lacks $file" >&2; exit 1; }
done
if grep -qE '\.lua$' <<<"$listing"; then echo "the tarball ships .lua files: not embedded?" >&2; exit 1; fi
# the repository-only export condition (TypeScript sources) is stripped at pack time
if tar -xzOf "$tarball" package/package.json | grep -q floodgate-source; then
  echo "the packed package.json names the floodgate-source condition" >&2; exit 1
fi
if [ -e "$repo/packages/floodgate/.package.json.dev" ]; then echo "postpack did not restore package.json" >&2; exit 1; fi

for version in "${versions[@]}"; do
  app="$work/app-ioredis-$version"
  mkdir -p "$app"
  cp -r "$repo/examples/." "$app/"
  rm -rf "$app/dist" "$app/node_modules"
  # no prom-client nor @opentelemetry/api: both optional peers, and no public type names them
  (cd "$app" && npm install --no-audit --no-fund --silent "$tarball" "ioredis@$version" \
    "@types/node@$(node -p "require('$repo/node_modules/@types/node/package.json').version")")
  if [ -d "$app/node_modules/floodgate/node_modules/ioredis" ]; then
    echo "floodgate brought its own ioredis next to the app's $version" >&2
    exit 1
  fi
  for peer in prom-client @opentelemetry/api; do
    if [ -d "$app/node_modules/$peer" ]; then echo "$peer got installed: the check below proves nothing" >&2; exit 1; fi
  done
  # every entry point's declarations, type-checked (skipLibCheck off) without the optional peers
  node -e '
    const entries = Object.keys(require(process.argv[1]).exports).filter((e) => e !== "./package.json")
    console.log(entries.map((e, i) => `export * as e${i} from "${e.replace(/^\./, "floodgate")}"`).join("\n"))
  ' "$app/node_modules/floodgate/package.json" >"$app/entry-points.ts"
  echo "--- ioredis $version: type-check (every entry point, no prom-client) and build"
  (cd "$app" && "$repo/node_modules/.bin/tsc" -p .)
  echo '{ "extends": "./tsconfig.json", "compilerOptions": { "noEmit": true }, "include": ["entry-points.ts"] }' \
    >"$app/tsconfig.entry-points.json"
  (cd "$app" && "$repo/node_modules/.bin/tsc" -p tsconfig.entry-points.json)
  for example in cache-aside rate-limit lock; do
    (cd "$app" && timeout 30 node "dist/$example/main.js")
  done
done
