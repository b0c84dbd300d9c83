# Quire in a container: a Swift 6.3 build stage, then a slim Debian runtime with only what the binary links.
#
#   docker build -t quire .
#   docker run -p 8080:8080 -v quire-data:/var/lib/quire -e QUIRE_AUTH_WRITE_TOKEN=secret quire

FROM swift:6.3-bookworm AS build
# libpq-dev: the package's CLibPQ (sources' connections to the app's PostgreSQL), linked by the binary.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libmicrohttpd-dev libsqlite3-dev zlib1g-dev libpq-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift openapi.yaml ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product quire --static-swift-stdlib \
 && install -D "$(swift build -c release --show-bin-path)/quire" /out/quire

FROM debian:bookworm-slim AS runtime
# Runtime libraries only: scripts/test/check-dockerfile keeps this list equal to what the binary links.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libmicrohttpd12 libsqlite3-0 libpq5 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /var/lib/quire --create-home quire
COPY --from=build /out/quire /usr/local/bin/quire
COPY config/quire.yaml /etc/quire/quire.yaml
USER quire
WORKDIR /var/lib/quire
VOLUME ["/var/lib/quire"]
# The container listens on every interface, so it needs a write token (QUIRE_AUTH_WRITE_TOKEN).
# Lists are kept in the volume (back them up with `quire backup --storage ... --to ...`).
ENV QUIRE_SERVER_HOST=0.0.0.0 \
    QUIRE_SERVER_PORT=8080 \
    QUIRE_STORAGE_PATH=/var/lib/quire/quire.sqlite
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["quire", "health", "--url", "http://127.0.0.1:8080/healthz"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["quire"]
CMD ["serve", "--config", "/etc/quire/quire.yaml"]
