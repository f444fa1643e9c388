// Command sapagent-dev runs the whole product in one process (make dev): embedded Temporal
// server and Web UI, worker, API, the SAP simulator with a real connector in front of it
// (DEV_SAP_ROUTE) and, without a real model configured, the offline model.
//
//	sapagent-dev                               run the stack (configuration from the environment)
//	sapagent-dev token --user <id> [--ttl 24h] print a bearer token for the running dev stack
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/devtoken"
	"github.com/sapagent/sapagent/internal/offlinellm"
)

const usage = `usage:
  sapagent-dev                                run the whole product in one process
  sapagent-dev ` + devtoken.Usage + `   print a bearer token for it (uses DATA_DIR's dev secrets)

Configuration comes from environment variables; see README.md.`

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	args := os.Args[1:]
	var err error
	switch {
	case len(args) == 0:
		err = run(log)
	case args[0] == "token":
		var cfg config.Config
		if cfg, err = config.Load(); err == nil {
			err = devtoken.Run(cfg, args[1:], os.Stdout)
		}
	case args[0] == "-h" || args[0] == "--help" || args[0] == "help":
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	default:
		// Refused before anything starts: a mistyped command must not start a second stack.
		fmt.Fprintf(os.Stderr, "sapagent-dev: unexpected arguments %q\n\n%s\n", args, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sapagent-dev:", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rules := devstack.DemoRules()
	if path := os.Getenv("OFFLINE_LLM_RULES"); path != "" {
		if rules, err = offlinellm.LoadRules(path); err != nil {
			return err
		}
	}
	stack, err := devstack.Start(ctx, devstack.Options{
		Config: cfg, Log: log, StartServices: true, OfflineLLM: offlinellm.Options{Rules: rules}, SAPRoute: cfg.DevSAPRoute,
	})
	if err != nil {
		return err
	}
	log.Info("sapagent dev stack is up",
		"api", stack.APIURL, "temporal", stack.TemporalAddress, "temporal_ui", stack.TemporalUIURL,
		"offline_model", stack.OfflineLLMURL, "sap_simulator", stack.SAPSimURL, "sap_connector", stack.ConnectorURL,
		"sap_route", cfg.DevSAPRoute, "data_dir", cfg.DataDir)
	select {
	case <-ctx.Done():
	case err = <-stack.Errors():
	}
	log.Info("stopping")
	stack.Stop()
	return err
}
