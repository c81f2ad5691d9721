#!/usr/bin/env bash
# Pins every image docker-compose.yml and the Dockerfile pull to the digest its tag points at now:
# `image: valkey/valkey:8.1.1` becomes `image: valkey/valkey:8.1.1@sha256:<digest>`, and an image
# pinned already gets its tag's current digest (the update: a tag's image rebuilt with security
# fixes). The tag stays beside the digest for people to read; Docker pulls by the digest. Run it
# after changing a tag, and from time to time; review the diff and commit it:
#
#   scripts/pin-images.sh           # rewrites docker-compose.yml and Dockerfile in place
#   scripts/pin-images.sh --check   # exit 1, naming them, when an image has no digest
#
# It asks the registry with `docker buildx imagetools inspect` (Docker's buildx plugin; the digest
# of the image index, so every platform's image is pinned at once). PIN_IMAGES_RESOLVE names
# another command printing a reference's digest (e.g. "crane digest"). PIN_IMAGES_ROOT names the
# directory holding the two files (default: this script's repository).
set -euo pipefail

root=${PIN_IMAGES_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
compose=$root/docker-compose.yml
dockerfile=$root/Dockerfile

# images prints the image references of both files, one a line: compose's `image:` values and the
# Dockerfile's FROM images (scratch and earlier stages excepted).
images() {
  sed -n -E 's/^[[:space:]]*image:[[:space:]]*"?([^"[:space:]#]+)"?.*$/\1/p' "$compose"
  awk 'toupper($1) == "FROM" {
         ref = $2; if (ref ~ /^--platform=/) ref = $3
         if (ref != "scratch" && !(tolower(ref) in stages)) print ref
         for (i = 3; i < NF; i++) if (toupper($i) == "AS") stages[tolower($(i + 1))] = 1
       }' "$dockerfile"
}

resolve() {
  if [ -n "${PIN_IMAGES_RESOLVE:-}" ]; then
    $PIN_IMAGES_RESOLVE "$1"
  else
    docker buildx imagetools inspect --format '{{.Manifest.Digest}}' "$1"
  fi
}

pinned() { [[ $1 =~ @sha256:[0-9a-f]{64}$ ]]; }

if [ "${1:-}" = "--check" ]; then
  bad=0
  while read -r ref; do
    if ! pinned "$ref"; then echo "pin-images: $ref has no digest (run scripts/pin-images.sh)" >&2; bad=1; fi
  done < <(images)
  exit $bad
fi
if [ $# -gt 0 ]; then
  echo "usage: scripts/pin-images.sh [--check]" >&2
  exit 2
fi

while read -r ref; do
  tag=${ref%@*}
  digest=$(resolve "$tag" | tr -d '[:space:]')
  if ! [[ $digest =~ ^sha256:[0-9a-f]{64}$ ]]; then
    echo "pin-images: no digest for $tag (got '$digest')" >&2
    exit 1
  fi
  for f in "$compose" "$dockerfile"; do
    # A literal replacement of the whole reference, where a space, a quote or the line's end
    # follows it (so valkey:8.1.1 is not replaced inside valkey:8.1.10).
    REF="$ref" NEW="$tag@$digest" awk 'BEGIN { ref = ENVIRON["REF"]; new = ENVIRON["NEW"] }
      {
        out = ""; line = $0
        while ((i = index(line, ref)) > 0) {
          after = substr(line, i + length(ref), 1)
          if (after == "" || after ~ /[[:space:]"]/) { out = out substr(line, 1, i - 1) new }
          else { out = out substr(line, 1, i - 1 + length(ref)) }
          line = substr(line, i + length(ref))
        }
        print out line
      }' "$f" >"$f.pin-images"
    mv "$f.pin-images" "$f"
  done
  echo "pin-images: $tag@$digest"
done < <(images | sort -u)
