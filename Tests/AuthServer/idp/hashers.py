from django.contrib.auth.hashers import PBKDF2PasswordHasher


class FastPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    """Test fixtures only: few iterations, so logins and client authentication are cheap."""

    iterations = 1000
