"""What every part of the gateway runs on: ``gateway.yaml`` parsing (:mod:`.config`), the
error tree (:mod:`.errors`), metrics and telemetry, the embedded redis-server, admission
control, circuit breakers, fair share of bulk work, JSON input checks and text helpers."""
