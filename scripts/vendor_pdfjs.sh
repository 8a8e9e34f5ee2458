#!/bin/sh
# Vendor PDF.js (npm package pdfjs-dist) into static/vendor/pdfjs/ for the document viewer.
#
# Run from the repository root: `make vendor-pdfjs` (or `scripts/vendor_pdfjs.sh [VERSION]`).
# The files are committed, so `make run`, `make test` and CI never need npm or a network;
# this script is only for updating PDF.js. `npm pack` checks the tarball against the
# registry's integrity hash. Only what the viewer loads is copied: the library and its
# worker (minified ES modules), the standard fonts (PDFs that do not embed the base-14
# fonts) and the CMaps (CJK text), so the viewer never fetches anything outside the portal.
set -eu

VERSION="${1:-4.10.38}"
DEST="static/vendor/pdfjs"

[ -f manage.py ] || { echo "run from the repository root" >&2; exit 1; }
command -v npm >/dev/null || { echo "npm is needed to vendor PDF.js (apt-get install npm)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "pdfjs-dist@$VERSION" >/dev/null && tar xzf "pdfjs-dist-$VERSION.tgz")
src="$tmp/package"

rm -rf "$DEST"
mkdir -p "$DEST"
cp "$src/build/pdf.min.mjs" "$src/build/pdf.worker.min.mjs" "$src/LICENSE" "$DEST/"
cp -R "$src/standard_fonts" "$src/cmaps" "$DEST/"
echo "pdfjs-dist $VERSION (npm), copied by scripts/vendor_pdfjs.sh" > "$DEST/VERSION"
echo "PDF.js $VERSION vendored into $DEST ($(du -sh "$DEST" | cut -f1))"
