/**
 * The wire DTOs of Nereid's OpenAI-compatible HTTP API (Jackson records, immutable). Field names
 * are the wire names (snake_case, as OpenAI and vLLM send them). The OpenAPI 3.1 document is still
 * to come (issue 6).
 */
package io.nereid.openapi;
