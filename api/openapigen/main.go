// Command openapigen writes schemas/openapi.json, the API's OpenAPI document, from the route
// descriptions in package api (`go generate ./api`); TestOpenAPIFileIsUpToDate fails when the
// file is stale. The page's REST types (web/src/api/schema.gen.ts) are generated from it.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sapagent/sapagent/api"
)

// go generate runs this in api/; the file is one level up.
const outPath = "../schemas/openapi.json"

func main() {
	raw, err := api.OpenAPIJSON()
	if err == nil {
		err = os.WriteFile(filepath.FromSlash(outPath), raw, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapigen:", err)
		os.Exit(1)
	}
}
