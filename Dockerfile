# syntax=docker/dockerfile:1
# Multi-stage build: a static codemojex binary on a distroless base.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags="-s -w" -o /out/codemojex ./cmd/bot

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/codemojex /codemojex
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/codemojex"]
