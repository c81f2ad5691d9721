module github.com/codemojex/codemojex

go 1.26.0

require (
	github.com/stretchr/testify v1.12.1
	github.com/valkey-io/valkey-go v1.0.79
)

require (
	github.com/caarlos0/env/v11 v11.4.2 // indirect
	github.com/compose-spec/compose-go/v2 v2.16.2 // indirect
	github.com/go-telegram/bot v1.19.0 // indirect
	github.com/joho/godotenv v1.5.1 // indirect
	github.com/oklog/ulid/v2 v2.1.2 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.59.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
