from oauth2_provider.oauth2_validators import OAuth2Validator


class TestIdPValidator(OAuth2Validator):
    """Adds the standard claims our tests look at (OpenID Connect Core §5.1, §5.4).

    `sub` is DOT's own: the user's primary key as a string. The other claims go into
    the ID token and the UserInfo response only when their scope was granted
    (`profile` -> preferred_username, name; `email` -> email, email_verified), as
    OAuth2Validator.oidc_claim_scope says. Taking no `request` argument makes DOT
    list these claims in discovery's claims_supported.
    """

    def get_additional_claims(self):
        return {
            "preferred_username": lambda request: request.user.get_username(),
            "name": lambda request: request.user.get_full_name() or request.user.get_username(),
            "email": lambda request: request.user.email,
            "email_verified": lambda request: True,
        }
