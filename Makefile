# Release builds of ocpihub: a static binary (no cgo: SQLite is pure Go),
# without local paths, stripped, stamped with the version.
#
#   make release                      # ./bin/ocpihub for this machine
#   make release GOOS=linux GOARCH=arm64
#   make release VERSION=v1.2.0
#   make docker                       # the container image (Dockerfile)
#
# ocpihub version prints what was stamped.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
OUT     ?= bin/ocpihub
IMAGE   ?= ocpihub:$(VERSION)

PKG     := github.com/ocpihub/ocpihub/internal/cli
LDFLAGS := -s -w -X $(PKG).version=$(VERSION) -X $(PKG).commit=$(COMMIT) -X $(PKG).date=$(DATE)

.PHONY: release docker test clean

release:
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o $(OUT) ./cmd/ocpihub
	@./$(OUT) version 2>/dev/null || true

docker:
	docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) --build-arg DATE=$(DATE) -t $(IMAGE) .

test:
	go test ./...

clean:
	rm -rf bin
