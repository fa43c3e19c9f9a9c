#!/usr/bin/env bash
# Refreshes the console's copy of bpmn-js (crates/server/console/vendor/bpmn-js/) from npm: the
# navigated viewer bundle, its two style sheets and the licence, which asks that the bpmn.io
# watermark stay visible (the console never hides it). The files are kept in the repository so
# that building kairos needs no network; run this to move to another version, then commit.
#
#   scripts/vendor-bpmn-js.sh 18.31.1
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: scripts/vendor-bpmn-js.sh VERSION}
dest=crates/server/console/vendor/bpmn-js
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack "bpmn-js@$version" --silent >/dev/null && tar xzf bpmn-js-*.tgz)
cp "$work/package/dist/bpmn-navigated-viewer.production.min.js" "$work/package/dist/assets/diagram-js.css" \
   "$work/package/dist/assets/bpmn-js.css" "$work/package/LICENSE" "$dest/"
echo "bpmn-js $version (npm), dist/bpmn-navigated-viewer.production.min.js and dist/assets/{diagram-js,bpmn-js}.css; scripts/vendor-bpmn-js.sh refreshes them." > "$dest/VERSION"
echo "vendored bpmn-js $version into $dest"
