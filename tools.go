//go:build tools

// This file pins modules that later packages use (Arrow, DNS) so that
// `go mod tidy` keeps them in go.mod before their first importer lands.
package trawl

import (
	_ "github.com/apache/arrow/go/v15/parquet/pqarrow"
	_ "github.com/miekg/dns"
	_ "github.com/parquet-go/parquet-go"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/urfave/cli/v2"
	_ "golang.org/x/net/html"
	_ "golang.org/x/net/publicsuffix"
	_ "gopkg.in/yaml.v3"
)
