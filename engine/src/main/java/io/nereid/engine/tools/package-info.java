/**
 * Command-line tools that work on model files ({@code bin/nereid quantize}); the server's commands
 * ({@code serve}, {@code generate}) live in the gateway.
 */
package io.nereid.engine.tools;
