package io.nereid.openapi;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** {@code GET /v1/models}: {@code {"object":"list","data":[model...]}}. */
public record ModelList(@JsonProperty("object") String object, @JsonProperty("data") List<Model> data) {

    public ModelList(List<Model> data) {
        this("list", data);
    }

    /**
     * One served model ({@code GET /v1/models/{id}}); {@code max_model_len} as vLLM reports it,
     * {@code description} (left out when null) says e.g. "demo, random weights".
     */
    public record Model(@JsonProperty("id") String id, @JsonProperty("object") String object,
            @JsonProperty("created") long created, @JsonProperty("owned_by") String ownedBy,
            @JsonProperty("max_model_len") int maxModelLen,
            @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("description") String description) {

        public Model(String id, long created, int maxModelLen, String description) {
            this(id, "model", created, "nereid", maxModelLen, description);
        }
    }
}
