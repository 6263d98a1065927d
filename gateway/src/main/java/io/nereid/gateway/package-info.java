/**
 * The command line the launcher runs ({@code bin/nereid serve | generate | version}):
 * {@link io.nereid.gateway.Main}, the {@code serve} configuration built once from flags and
 * {@code NEREID_*} variables ({@code ServeConfig}), the served model over
 * {@link io.nereid.engine.api.Engines#open} ({@code ServingModel}), startup and the SIGTERM drain
 * ({@code ServeCommand}), and {@code generate} with its offline batch mode. Uses the engine through
 * {@code engine.api} and the text front end only (checked by {@code GatewayArchitectureTest}).
 */
package io.nereid.gateway;
