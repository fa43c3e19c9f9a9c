#!/usr/bin/env bash
# Installs the official client libraries that the compatibility tests drive against a running
# kairos node (crates/server/tests/clients_*.rs): every clients/*/package.json with `npm ci`
# (its package-lock.json pins the versions), every clients/*/requirements.txt (pinned) into one
# virtualenv at clients/.venv. Prints `KAIROS_CLIENTS=DIR` for `eval`.
#
#   eval "$(scripts/clients.sh)"
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD/clients

for pkg in "$root"/*/package.json; do
    dir=$(dirname "$pkg")
    if [[ ! -d $dir/node_modules ]] || [[ $dir/package-lock.json -nt $dir/node_modules ]]; then
        echo "clients.sh: npm ci in ${dir#"$PWD"/}" >&2
        (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
        touch "$dir/node_modules"
    fi
done

if [[ ! -x $root/.venv/bin/python ]]; then
    echo "clients.sh: creating clients/.venv" >&2
    python3 -m venv "$root/.venv" >&2
fi
stamp=$root/.venv/.installed
for req in "$root"/*/requirements.txt; do
    if [[ ! -e $stamp ]] || [[ $req -nt $stamp ]]; then
        echo "clients.sh: pip install -r ${req#"$PWD"/}" >&2
        "$root/.venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req" >&2
        installed=1
    fi
done
[[ -n ${installed:-} ]] && touch "$stamp"
echo "export KAIROS_CLIENTS=$root"
