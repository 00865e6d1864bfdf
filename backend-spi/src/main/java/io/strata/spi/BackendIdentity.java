package io.strata.spi;

/**
 * @param id      stable machine name, e.g. {@code cpu} or {@code cuda}
 * @param name    human-readable name
 * @param vendor  who ships it
 * @param version the backend's own version
 */
public record BackendIdentity(String id, String name, String vendor, String version) {
}
