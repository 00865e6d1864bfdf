package io.strata.platform.keys;

/** The paths of the model API: what needs an API key, and what answers errors in the OpenAI shape. */
public final class ApiRoutes {
    private ApiRoutes() {
    }

    public static boolean isApi(String path) {
        return path.startsWith("/v1/") || path.equals("/v1") || path.equals("/tokenize") || path.equals("/detokenize");
    }
}
