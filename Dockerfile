# storage-emulator: a multi-stage build. Package.swift links the Swift runtime,
# FoundationEssentials, the C++ runtime and zlib into the binary on Linux (config/link), so the
# slim image needs no Swift, C++ or zlib libraries.
# The build stage runs the same command as the README's release build.
FROM swift:6.3-bookworm AS build
# The emulator links the system zlib (gzip transcoding of downloads).
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends zlib1g-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY config/link ./config/link
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product storage-emulator \
 && install -D "$(swift build -c release --show-bin-path)/storage-emulator" /out/storage-emulator

FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin emulator \
 && mkdir -p /data && chown emulator /data
COPY --from=build /out/storage-emulator /usr/local/bin/storage-emulator
VOLUME ["/data"]
EXPOSE 9199
USER 10001
# The emulator answers its own health check (the slim image has no curl): GET /internal/health.
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/storage-emulator", "health", "--port", "9199"]
ENTRYPOINT ["/usr/local/bin/storage-emulator"]
CMD ["--host", "0.0.0.0", "--port", "9199", "--data-dir", "/data"]
