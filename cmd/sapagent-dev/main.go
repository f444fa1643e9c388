// Command sapagent-dev runs the whole product in one process (make dev): embedded Temporal
// server and Web UI, worker, API, the SAP simulator with a real connector in front of it
// (DEV_SAP_ROUTE) and, without a real model configured, the offline model.
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
	"github.com/sapagent/sapagent/internal/offlinellm"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(log); err != nil {
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
