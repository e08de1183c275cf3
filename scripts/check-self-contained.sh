#!/usr/bin/env bash
# Run tests from a fresh clone alone in a temporary folder, as a newcomer's clone is: nothing
# beside it, so any test that reads outside the repository fails here.
#
#   bash scripts/check-self-contained.sh                  # a clone of HEAD, the quick subset
#   bash scripts/check-self-contained.sh --working-tree   # what `git add -A` would commit
#   bash scripts/check-self-contained.sh [--working-tree] tests/   # other pytest arguments
#
# The checkout's virtual environment runs the tests (PYTHON overrides it), with the copy's src/
# first on the path: its editable install of this checkout is never imported.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-$repo/.venv/bin/python}"
mode=clone
if [[ "${1:-}" == "--working-tree" ]]; then
    mode=working-tree
    shift
fi
if (($# == 0)); then
    # The tests that read the packaged tau-bench store and WebShop set, and the static guard.
    set -- tests/test_self_contained.py tests/test_data.py tests/catalog \
        tests/assistant/test_store_catalog.py tests/assistant/test_assistant_tau.py \
        tests/tuning/test_holdout.py tests/retrieval/test_search.py tests/cli/test_search_cli.py
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
clone="$work/cartagent"
if [[ "$mode" == clone ]]; then
    git clone --quiet --no-hardlinks "$repo" "$clone"
else
    mkdir "$clone"
    # Tracked and new files, less those deleted in the working tree.
    (cd "$repo" && git ls-files -z --cached --others --exclude-standard --deduplicate) |
        while IFS= read -r -d '' name; do
            if [[ -e "$repo/$name" || -L "$repo/$name" ]]; then printf '%s\0' "$name"; fi
        done | (cd "$repo" && xargs -0 -r cp --parents --no-dereference -t "$clone")
fi

# The copy must be alone in its folder: nothing beside it to read.
beside="$(ls -A "$work")"
if [[ "$beside" != cartagent ]]; then
    echo "check-self-contained: the clone is not alone in $work: $beside" >&2
    exit 1
fi

cd "$clone"
export PYTHONPATH="$clone/src:$clone"
found="$("$python" -c 'import cartagent; print(cartagent.__file__)')"
if [[ "$found" != "$clone/src/"* ]]; then
    echo "check-self-contained: cartagent comes from $found, not from the clone" >&2
    exit 1
fi
echo "check-self-contained: $mode copy at $clone, cartagent from its src/" >&2
"$python" -m pytest -q -p no:cacheprovider --rootdir "$clone" "$@"
