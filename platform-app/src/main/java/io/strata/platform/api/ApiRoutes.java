package io.strata.platform.api;

/**
 * The paths of the model API (what needs an API key, and what answers errors in the OpenAI shape) and the
 * exchange attribute under which the key filter in front of them leaves the caller's key id. The API owns
 * both, so {@code keys} depends on {@code api} and never the other way round.
 */
public final class ApiRoutes {
    /** Exchange attribute: the id of the API key that authenticated the request (absent when auth is off). */
    public static final String KEY_ID_ATTRIBUTE = "io.strata.platform.api.keyId";

    private ApiRoutes() {
    }

    public static boolean isApi(String path) {
        return path.startsWith("/v1/") || path.equals("/v1") || path.equals("/tokenize") || path.equals("/detokenize");
    }
}
