// Command otelcol is an OpenTelemetry Collector with what arenaprof's
// end-to-end tests need to carry profiles: the OTLP receiver, the OTLP/HTTP
// exporter, and the profiles signal on (the service.profilesSupport feature
// gate, alpha). It is built from the Go module proxy, in a module of its
// own so that no user of arenaprof depends on the Collector.
//
// The versions are pinned to v0.147.0 (pdata v1.53.0) on purpose: that is
// the last release whose profiles wire format (OTLP profiles v1development,
// opentelemetry-proto profiles v0.2.0) is the one Grafana Pyroscope
// v1.19.3 reads. From v0.148.0 on, the Collector's Sample message numbers
// its fields differently (values moved from field 2 to 4, attribute
// indices from 3 to 2, the link index from 4 to 3), so a Collector of
// v0.148.0 or later and Pyroscope v1.19.3 misread each other's samples.
//
//	go build -o otelcol . && ./otelcol --config collector.yaml
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
		fmt.Fprintln(os.Stderr, "otelcol:", err)
		os.Exit(1)
	}
	set := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     "otelcol",
			Description: "OpenTelemetry Collector for arenaprof's tests (OTLP in, OTLP/HTTP out, profiles on)",
			Version:     "0.147.0",
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
		fmt.Fprintln(os.Stderr, "otelcol:", err)
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
