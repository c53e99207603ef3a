// Command otelcol2 is an OpenTelemetry Collector with what arenaprof's
// end-to-end tests need to carry profiles to Grafana Pyroscope v2.2: the
// OTLP receiver, the OTLP/HTTP exporter, and the profiles signal on (the
// service.profilesSupport feature gate, alpha). It is built from the Go
// module proxy, in a module of its own so that no user of arenaprof
// depends on the Collector.
//
// The versions are pinned to v0.165.0 (pdata v1.71.0), the newest release
// on the module proxy when this was written; its profiles wire format is
// OTLP profiles v1development v0.3.0 (from Collector v0.148.0 on), the one
// Pyroscope v2.2.1 reads. tools/otelcol keeps v0.147.0, the last release
// of the v0.2.0 format that Pyroscope v1.19.3 reads: the two formats
// number the Sample's fields differently, so each Collector must meet the
// server that reads its format.
//
//	go build -o otelcol2 . && ./otelcol2 --config collector.yaml
package main

import (
	"fmt"
	"os"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

// profilesGate is the feature gate behind which the Collector carries
// profiles.
const profilesGate = "service.profilesSupport"

func main() {
	// On by default; --feature-gates on the command line still overrides.
	if err := featuregate.GlobalRegistry().Set(profilesGate, true); err != nil {
		fmt.Fprintln(os.Stderr, "otelcol2:", err)
		os.Exit(1)
	}
	set := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     "otelcol2",
			Description: "OpenTelemetry Collector for arenaprof's tests (OTLP in, OTLP/HTTP out, profiles on)",
			Version:     "0.165.0",
		},
		Factories: factories,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{
					fileprovider.NewFactory(),
					envprovider.NewFactory(),
				},
			},
		},
	}
	if err := otelcol.NewCommand(set).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "otelcol2:", err)
		os.Exit(1)
	}
}

func factories() (otelcol.Factories, error) {
	f := otelcol.Factories{Telemetry: otelconftelemetry.NewFactory()}
	var err error
	if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory()); err != nil {
		return f, err
	}
	if f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](otlphttpexporter.NewFactory()); err != nil {
		return f, err
	}
	return f, nil
}
