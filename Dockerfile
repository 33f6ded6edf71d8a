# syntax=docker/dockerfile:1
#
# connect-solace image. Build: docker build -t connect-solace:dev --build-arg VERSION=$(git describe --tags --always) .
#
# Stage 1 compiles with cgo: solace.dev/go/messaging links the Solace C client
# from the static library bundled in the Go module (lib/linux_amd64 or
# lib/linux_arm64), so the binary needs only glibc at run time. Build and
# runtime are both Debian 12 (bookworm) so that the glibc the binary was linked
# against is the one it runs on.
FROM golang:1.26-bookworm AS build
WORKDIR /src

# Dependencies first, so that source edits do not invalidate this layer.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download

COPY . .
ARG VERSION=dev
ARG DATE_BUILT=unknown
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=1 go build -trimpath \
      -ldflags "-s -w -X main.Version=${VERSION} -X main.DateBuilt=${DATE_BUILT}" \
      -o /out/connect-solace ./cmd/connect-solace \
 && /out/connect-solace --version

# Stage 2: glibc, CA certificates and tzdata, no shell, non-root (uid 65532).
FROM gcr.io/distroless/base-debian12:nonroot
COPY --from=build /out/connect-solace /usr/local/bin/connect-solace
COPY config/examples/ /etc/connect-solace/examples/

# The Benthos HTTP server: /ping, /ready, /metrics (and /streams in streams mode).
EXPOSE 4195
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/connect-solace"]
CMD ["run", "/etc/connect-solace/config.yaml"]
