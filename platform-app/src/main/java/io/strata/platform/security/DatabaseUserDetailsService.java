package io.strata.platform.security;

import org.springframework.security.core.userdetails.ReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetails;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** Looks console accounts up in the database; JDBC blocks, so it runs off the event loop. */
@Component
public class DatabaseUserDetailsService implements ReactiveUserDetailsService {
    static final String ADMIN_ROLE = "ADMIN";

    private final AdminUserRepository users;

    public DatabaseUserDetailsService(AdminUserRepository users) {
        this.users = users;
    }

    @Override
    public Mono<UserDetails> findByUsername(String username) {
        return Mono.fromCallable(() -> users.find(username))
                .subscribeOn(Schedulers.boundedElastic())
                .flatMap(Mono::justOrEmpty)
                .map(user -> User.withUsername(user.username())
                        .password(user.passwordHash())
                        .disabled(!user.enabled())
                        .roles(ADMIN_ROLE)
                        .build());
    }
}
