# Production images, built from one Dockerfile:
#   default (last stage): the small `sapagent` binary (api, worker, migrate, offline-llm). It does
#     not link the Temporal server; that runs as its own service (docker-compose.yml).
#   --target connector: `sapagent-connector`, deployed next to SAP (docs/connector.md).
#   --target sapsim: `sapagent-sapsim`, the simulated SAP landscape (SOAP RFC, ADT, OData) for
#     demos and tests; the platform reaches it through a connector (SIMULATOR_CONNECTOR_URL).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/sapagent ./cmd/sapagent
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/sapagent-connector ./cmd/sapagent-connector
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/sapagent-sapsim ./cmd/sapagent-sapsim
# The connector's idempotency store lives here (a volume), owned by distroless's nonroot user.
RUN mkdir -p /out/state

FROM gcr.io/distroless/static-debian12:nonroot AS connector
COPY --from=build /out/sapagent-connector /usr/local/bin/sapagent-connector
COPY --from=build --chown=65532:65532 /out/state /var/lib/sapagent-connector
USER nonroot
ENV CONNECTOR_ADDR=:8070 CONNECTOR_CONFIG=/etc/sapagent-connector/connector.yaml
EXPOSE 8070
ENTRYPOINT ["/usr/local/bin/sapagent-connector"]

FROM gcr.io/distroless/static-debian12:nonroot AS sapsim
COPY --from=build /out/sapagent-sapsim /usr/local/bin/sapagent-sapsim
USER nonroot
ENV SAPSIM_ADDR=0.0.0.0:8090
EXPOSE 8090
ENTRYPOINT ["/usr/local/bin/sapagent-sapsim"]

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sapagent /usr/local/bin/sapagent
USER nonroot
ENTRYPOINT ["/usr/local/bin/sapagent"]
CMD ["api"]
