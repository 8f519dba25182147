#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A user of the organisation's directory: Microsoft Graph's `user` resource with the
/// properties v1.0 returns by default, the ones the walkthrough's detail view showed.
///
/// Every property but `id` may be missing or null: with `User.ReadBasic.All` Graph
/// returns only the basic profile, and a guest or a room has no phone or office.
public struct GraphUser: Sendable, Hashable, Codable {
  public var id: String
  public var displayName: String?
  public var givenName: String?
  public var surname: String?
  public var userPrincipalName: String?
  public var mail: String?
  public var businessPhones: [String]
  public var mobilePhone: String?
  public var jobTitle: String?
  public var officeLocation: String?
  /// `Member` or `Guest` (a user invited from another tenant), when Graph says.
  public var userType: String?

  public init(
    id: String, displayName: String? = nil, givenName: String? = nil, surname: String? = nil,
    userPrincipalName: String? = nil, mail: String? = nil, businessPhones: [String] = [], mobilePhone: String? = nil,
    jobTitle: String? = nil, officeLocation: String? = nil
  ) {
    self.id = id
    self.displayName = displayName
    self.givenName = givenName
    self.surname = surname
    self.userPrincipalName = userPrincipalName
    self.mail = mail
    self.businessPhones = businessPhones
    self.mobilePhone = mobilePhone
    self.jobTitle = jobTitle
    self.officeLocation = officeLocation
  }

  private enum CodingKeys: String, CodingKey {
    case id, displayName, givenName, surname, userPrincipalName, mail, businessPhones, mobilePhone, jobTitle
    case officeLocation, userType
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    id = try container.decode(String.self, forKey: .id)
    displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
    givenName = try container.decodeIfPresent(String.self, forKey: .givenName)
    surname = try container.decodeIfPresent(String.self, forKey: .surname)
    userPrincipalName = try container.decodeIfPresent(String.self, forKey: .userPrincipalName)
    mail = try container.decodeIfPresent(String.self, forKey: .mail)
    // Graph sends `[]` for no phones, but a trimmed `$select` or a proxy may drop it.
    businessPhones = try container.decodeIfPresent([String].self, forKey: .businessPhones) ?? []
    mobilePhone = try container.decodeIfPresent(String.self, forKey: .mobilePhone)
    jobTitle = try container.decodeIfPresent(String.self, forKey: .jobTitle)
    officeLocation = try container.decodeIfPresent(String.self, forKey: .officeLocation)
    userType = try container.decodeIfPresent(String.self, forKey: .userType)
  }

  /// Every phone number, business ones first.
  public var phones: [String] { businessPhones + (mobilePhone.map { [$0] } ?? []) }
}
