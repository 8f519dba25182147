import os
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

    It also keeps a refresh token's scope as RFC 6749 §6 says, and the access tokens
    issued before a refresh alive (below).
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

    # RFC 6749 §6 lets a server revoke the old refresh token when it issues a new one; it
    # says nothing of the access tokens issued before. DOT 3.4.1 deletes the access token
    # issued beside the refresh token it rotates out, so a client holding two access tokens
    # of one grant (its own, and one a refresh narrowed to other scopes, as MSAL holds
    # Graph's and Outlook's) loses the first the moment it gets the second. Microsoft,
    # Google and Keycloak keep them valid until they expire, and so does this server: the
    # old refresh token is unlinked from its access token before DOT revokes it. Revoking a
    # refresh token at /o/revoke_token/ (RFC 7009 §2.1) still revokes its access token.
    # With AUTH_SERVER_AS_SHIPPED=1 neither change is made: refresh tokens and the access
    # tokens beside them behave as DOT 3.4.1 ships them, a real server users have (rotating
    # a refresh token deletes the access token issued beside it), for the tests of how
    # tokenctl copes with such a server.
    as_shipped = os.environ.get("AUTH_SERVER_AS_SHIPPED") == "1"

    def save_bearer_token(self, token, request, *args, **kwargs):
        if self.as_shipped:
            return super().save_bearer_token(token, request, *args, **kwargs)
        rotated = getattr(request, "refresh_token_instance", None)
        if request.grant_type == "refresh_token" and isinstance(rotated, RefreshToken):
            RefreshToken.objects.filter(pk=rotated.pk).update(access_token=None)
        super().save_bearer_token(token, request, *args, **kwargs)
        if request.grant_type == "refresh_token" or "refresh_token" not in token:
            return
        family = RefreshToken.objects.filter(token=token["refresh_token"]).values_list("token_family", flat=True).first()
        if family is not None:
            with self._family_lock:
                self._family_scopes[family] = token.get("scope", "")

    def get_original_scopes(self, refresh_token, request, *args, **kwargs):
        if self.as_shipped:
            return super().get_original_scopes(refresh_token, request, *args, **kwargs)
        family = getattr(request.refresh_token_instance, "token_family", None)
        with self._family_lock:
            scope = self._family_scopes.get(family)
        if scope is None:
            return super().get_original_scopes(refresh_token, request, *args, **kwargs)
        return scope.split()
