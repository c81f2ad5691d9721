// Package deploytest holds the tests of the repository's deployment files
// (docker-compose.yml, Dockerfile, .env.example): no Docker engine runs in
// CI, so the compose file is loaded with the Compose Specification's own
// parser (github.com/compose-spec/compose-go/v2) and its facts are checked.
// It also holds docs/architecture.md's import table and the import rule (no
// public package imports internal/) to the module's import graph (go list).
package deploytest
