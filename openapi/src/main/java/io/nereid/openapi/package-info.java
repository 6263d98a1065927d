/**
 * The OpenAPI 3.1 contract of every HTTP route and the wire DTOs (Jackson). Empty until the
 * gateway lands; see the README status table.
 */
package io.nereid.openapi;
