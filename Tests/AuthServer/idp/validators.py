import threading

from oauth2_provider.models import RefreshToken
from oauth2_provider.oauth2_validators import OAuth2Validator


class TestIdPValidator(OAuth2Validator):
    """Adds the standard claims our tests look at (OpenID Connect Core §5.1, §5.4).

    `sub` is DOT's own: the user's primary key as a string. The other claims go into
    the ID token and the UserInfo response only when their scope was granted
    (`profile` -> preferred_username, name; `email` -> email, email_verified), as
    OAuth2Validator.oidc_claim_scope says. Taking no `request` argument makes DOT
    list these claims in discovery's claims_supported.

    It also keeps a refresh token's scope as RFC 6749 §6 says (below).
    """

    def get_additional_claims(self):
        return {
            "preferred_username": lambda request: request.user.get_username(),
            "name": lambda request: request.user.get_full_name() or request.user.get_username(),
            "email": lambda request: request.user.email,
            "email_verified": lambda request: True,
        }

    # RFC 6749 §6: a refresh request may narrow the new access token's scope, but "if a new
    # refresh token is issued, the refresh token scope MUST be identical to that of the
    # refresh token included by the client in the request". DOT 3.4.1 takes a refresh
    # token's scope from the access token issued beside it, so one narrowed refresh narrows
    # the whole grant from then on. The scope each token family (DOT's rotation chain) was
    # granted is remembered here, in this one server process, and a refresh token's scope
    # is its family's, as the RFC says.
    _family_scopes = {}
    _family_lock = threading.Lock()

    def save_bearer_token(self, token, request, *args, **kwargs):
        super().save_bearer_token(token, request, *args, **kwargs)
        if request.grant_type == "refresh_token" or "refresh_token" not in token:
            return
        family = RefreshToken.objects.filter(token=token["refresh_token"]).values_list("token_family", flat=True).first()
        if family is not None:
            with self._family_lock:
                self._family_scopes[family] = token.get("scope", "")

    def get_original_scopes(self, refresh_token, request, *args, **kwargs):
        family = getattr(request.refresh_token_instance, "token_family", None)
        with self._family_lock:
            scope = self._family_scopes.get(family)
        if scope is None:
            return super().get_original_scopes(refresh_token, request, *args, **kwargs)
        return scope.split()
