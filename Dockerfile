# Production image: the small `sapagent` binary (api, worker, migrate, offline-llm).
# It does not link the Temporal server; that runs as its own service (docker-compose.yml).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/sapagent ./cmd/sapagent

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sapagent /usr/local/bin/sapagent
USER nonroot
ENTRYPOINT ["/usr/local/bin/sapagent"]
CMD ["api"]
