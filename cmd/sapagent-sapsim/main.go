// Command sapagent-sapsim serves the simulated SAP landscape (internal/sap/sapsim) over HTTP at
// SAPSIM_ADDR: SAP's own interfaces (SOAP RFC under /<SID>/sap/bc/soap/rfc, ADT under
// /<SID>/sap/bc/adt) for a connector in front of it, and the connector protocol itself at
// /ECC and /S4H. The platform binary does not link it. Wiring only.
//
//	sapagent-sapsim [--abapgit <folder>] [--landscape-objects N]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/sapagent/sapagent/internal/app"
	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], log); err != nil {
		fmt.Fprintln(os.Stderr, "sapagent-sapsim:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, log *slog.Logger) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("sapagent-sapsim", flag.ContinueOnError)
	abapGit := fs.String("abapgit", "", "load custom code from this abapGit folder into the ECC system")
	objects := fs.Int("landscape-objects", cfg.SAPSimLandscapeObjects, "generate about this many standard objects per system, and a twentieth as many custom objects (SAPSIM_LANDSCAPE_OBJECTS)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *objects < 0 {
		return fmt.Errorf("--landscape-objects must not be negative")
	}
	land := sapsim.NewLandscape(sapsim.Options{Latency: cfg.SAPSimLatency, ErrorRate: cfg.SAPSimErrorRate, GeneratedObjects: *objects})
	if *abapGit != "" {
		ecc, _ := land.System("ECC")
		rep, err := ecc.LoadABAPGitReport(*abapGit)
		if err != nil {
			return err
		}
		log.Info("abapGit repository loaded", "folder", *abapGit, "loaded", rep.Loaded, "unresolved", rep.Unresolved,
			"skipped", rep.Skipped, "custom_namespaces", rep.Namespaces, "summary_endpoint", "/ECC/"+sapsim.EndpointABAPGitLoad)
		fmt.Fprintln(os.Stderr, rep.String())
	}
	l, err := net.Listen("tcp", cfg.SAPSimAddr)
	if err != nil {
		return err
	}
	base := "http://" + l.Addr().String()
	log.Info("SAP simulator listening", "ecc", base+"/ECC", "s4hana", base+"/S4H",
		"soap_rfc", base+"/ECC/"+sapsim.SOAPRFCPath, "users", "DEVELOPER, RESTRICTED (client 100)")
	return app.Serve(ctx, l, land.Handler())
}
