#!/usr/bin/env bash
# A scratch copy of the course with pending modules put back into the tree, to check and build them before they
# move in: pending/overlay.sh DEST ID...  (then: cd DEST && tutor check --strict && mkdocs build --strict)
# pending/<ID>/ mirrors the repository (modules/, labs/, cards/, tests/, tutor_build/); its h200.jsonl,
# references-add.yml and glossary-add.yml are appended to the course's files.
set -euo pipefail
dest=${1:?destination folder}; shift
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$dest" && mkdir -p "$dest"
(cd "$root" && git ls-files -co --exclude-standard | grep -v '^pending/' | tar -cf - -T - ) | tar -xf - -C "$dest"
ln -s "$root/.venv" "$dest/.venv"
for id in "$@"; do
  src=$root/pending/$id
  for d in modules labs cards tests tutor_build docs; do if [ -d "$src/$d" ]; then cp -r "$src/$d" "$dest/"; fi; done
  if [ -f "$src/h200.jsonl" ]; then cat "$src/h200.jsonl" >> "$dest/measurements/h200.jsonl"; fi
  if [ -f "$src/references-add.yml" ]; then cat "$src/references-add.yml" >> "$dest/references.yml"; fi
  if [ -f "$src/glossary-add.yml" ]; then cat "$src/glossary-add.yml" >> "$dest/glossary.yml"; fi
done
echo "scratch course in $dest with ${*:-no pending modules}"
