/**
 * The wire DTOs of Nereid's OpenAI-compatible HTTP API (Jackson records, immutable). Field names
 * are the wire names (snake_case, as OpenAI and vLLM send them). The OpenAPI 3.1 document of every
 * route is {@code openapi.json} in this package ({@link io.nereid.openapi.OpenApiDocument}).
 */
package io.nereid.openapi;
