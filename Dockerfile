# syntax=docker/dockerfile:1
#
# ocpihub container image: a static binary on a distroless base, run as a
# non-root user. Build:
#
#   docker build -t ocpihub --build-arg VERSION=$(git describe --tags --always) \
#     --build-arg COMMIT=$(git rev-parse --short=12 HEAD) --build-arg DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ) .
#
# Run (SQLite in the /data volume; use --db postgres://… for PostgreSQL):
#
#   docker run -p 8080:8080 -v ocpihub-data:/data \
#     -e OCPIHUB_PUBLIC_URL=https://ocpi.example.in -e OCPIHUB_ADMIN_TOKEN=… -e OCPIHUB_SECRET_KEY=… ocpihub

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=
ARG DATE=
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/ocpihub/ocpihub/internal/cli.version=${VERSION} -X github.com/ocpihub/ocpihub/internal/cli.commit=${COMMIT} -X github.com/ocpihub/ocpihub/internal/cli.date=${DATE}" \
      -o /out/ocpihub ./cmd/ocpihub \
 && mkdir -p /out/data

# distroless/static: CA certificates, tzdata, /etc/passwd with nonroot
# (65532); no shell, no package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ocpihub /usr/local/bin/ocpihub
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080
ENV OCPIHUB_ADDR=:8080 \
    OCPIHUB_DB=sqlite:/data/ocpihub.db \
    OCPIHUB_LOG_FORMAT=json
# Orchestrators probe GET /healthz (alive) and GET /readyz (database up,
# migrations done, not draining); distroless has no shell for a
# HEALTHCHECK command, so the probes belong to the orchestrator, e.g.
#   livenessProbe:  httpGet: {path: /healthz, port: 8080}
#   readinessProbe: httpGet: {path: /readyz,  port: 8080}
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/ocpihub"]
CMD ["serve"]
