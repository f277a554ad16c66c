#!/usr/bin/env bash
# Move a pending module into the course: pending/land.sh ID. Its files go to their places in the tree, its records,
# new references and new glossary entries are appended to the course's files, and pending/<ID>/ is removed.
set -euo pipefail
id=${1:?module id}
root=$(cd "$(dirname "$0")/.." && pwd)
src=$root/pending/$id
for d in modules labs cards tests tutor_build docs; do if [ -d "$src/$d" ]; then cp -r "$src/$d" "$root/"; fi; done
if [ -f "$src/h200.jsonl" ]; then cat "$src/h200.jsonl" >> "$root/measurements/h200.jsonl"; fi
if [ -f "$src/references-add.yml" ]; then cat "$src/references-add.yml" >> "$root/references.yml"; fi
if [ -f "$src/glossary-add.yml" ]; then cat "$src/glossary-add.yml" >> "$root/glossary.yml"; fi
git -C "$root" rm -rq --cached "pending/$id" 2>/dev/null || true
rm -rf "$src"
echo "landed $id"
