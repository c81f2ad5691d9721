# Multi-stage build: a static codemojex binary on an empty base image.
# The build image is pinned to an exact version; scripts/pin-images.sh adds
# its digest (and updates it). The final image is FROM scratch: nothing to
# pin, nothing but the binary, the CA certificates (from the build image's
# Debian ca-certificates) and an unprivileged user id; no shell, no curl:
# `codemojex healthcheck` is the container's health probe.
FROM golang:1.26.8-bookworm AS build
# VERSION is stamped into the binary (codemojex --version, the start-up log).
ARG VERSION=
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath \
      -ldflags="-s -w -X github.com/codemojex/codemojex/internal/version.stamped=${VERSION}" \
      -o /out/codemojex ./cmd/bot

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/codemojex /codemojex
# 65532: the "nonroot" user of distroless images; no /etc/passwd needed.
USER 65532:65532
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["/codemojex", "healthcheck"]
ENTRYPOINT ["/codemojex"]
