package io.strata.platform.web;

import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.util.MultiValueMap;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.server.ServerWebExchange;

/** The console's entry points; Spring Security itself handles {@code POST /login} and {@code /logout}. */
@Controller
public class LoginController {

    /**
     * The sign-in page. Spring Security redirects here with {@code ?error} after a failed sign-in and
     * {@code ?logout} after signing out; the page shows the matching message only then.
     */
    @GetMapping("/login")
    public String login(ServerWebExchange exchange, Model model) {
        MultiValueMap<String, String> query = exchange.getRequest().getQueryParams();
        model.addAttribute("loginFailed", query.containsKey("error"));
        model.addAttribute("signedOut", query.containsKey("logout"));
        return "login";
    }

    @GetMapping("/")
    public String root() {
        return "redirect:/admin";
    }
}
