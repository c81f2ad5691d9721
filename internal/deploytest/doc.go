// Package deploytest holds the tests of the repository's deployment files
// (docker-compose.yml, Dockerfile, .env.example): no Docker engine runs in
// CI, so the compose file is loaded with the Compose Specification's own
// parser (github.com/compose-spec/compose-go/v2) and its facts are checked.
package deploytest
