/// The intake's HTTP API as an OpenAPI 3.1 document, served at `GET /openapi.json`. This file
/// is the document kept in the repository: change it with the routes (a test checks that every
/// route is in it, and schemathesis checks every answer against it).
public enum OpenAPIDocument {
    public static let json = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "iap-pipeline intake",
    "version": "1.0.0",
    "description": "Verifies Apple in-app purchases and grants each once. With IAP_CLIENT_KEYS_FILE set, every /v1/receipts* and /v1/users/* request must carry the X-IAP-Key, X-IAP-Timestamp and X-IAP-Signature headers (docs/security.md); without it the intake is open."
  },
  "servers": [
    {
      "url": "http://127.0.0.1:8080"
    }
  ],
  "paths": {
    "/v1/receipts": {
      "post": {
        "operationId": "submitReceipt",
        "summary": "Submit a purchase's evidence for verification and grant",
        "security": [
          {
            "clientKey": []
          },
          {}
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/Submission"
              }
            }
          }
        },
        "responses": {
          "202": {
            "description": "Accepted and stored: a new ticket",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Accepted"
                }
              }
            },
            "headers": {
              "Location": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "200": {
            "description": "The same user sent the same evidence before: the same ticket, nothing queued",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Accepted"
                }
              }
            },
            "headers": {
              "Location": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Error"
          },
          "401": {
            "$ref": "#/components/responses/Error"
          },
          "413": {
            "$ref": "#/components/responses/Error"
          },
          "415": {
            "$ref": "#/components/responses/Error"
          },
          "429": {
            "$ref": "#/components/responses/Error"
          },
          "503": {
            "$ref": "#/components/responses/Error"
          }
        }
      }
    },
    "/v1/receipts/{ticket}": {
      "get": {
        "operationId": "getTicket",
        "summary": "A ticket's status and the outcome of each of its purchases",
        "security": [
          {
            "clientKey": []
          },
          {}
        ],
        "parameters": [
          {
            "name": "ticket",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string",
              "minLength": 1,
              "maxLength": 64,
              "pattern": "^[A-Za-z0-9_:-]+$"
            }
          },
          {
            "name": "wait",
            "in": "query",
            "required": false,
            "description": "Seconds to wait for a terminal (or held) status.",
            "schema": {
              "type": "integer",
              "minimum": 0,
              "maximum": 30
            }
          }
        ],
        "responses": {
          "200": {
            "description": "The ticket",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Ticket"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Error"
          },
          "401": {
            "$ref": "#/components/responses/Error"
          },
          "404": {
            "$ref": "#/components/responses/Error"
          },
          "503": {
            "$ref": "#/components/responses/Error"
          }
        }
      }
    },
    "/v1/notifications/apple": {
      "post": {
        "operationId": "appleNotification",
        "summary": "App Store Server Notifications V2 (the URL you give Apple)",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "type": "object",
                "required": [
                  "signedPayload"
                ],
                "properties": {
                  "signedPayload": {
                    "type": "string",
                    "description": "The notification, a compact JWS Apple signed"
                  }
                }
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "Stored (now, or before: applied once either way)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/NotificationAccepted"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Error"
          },
          "401": {
            "$ref": "#/components/responses/Error"
          },
          "413": {
            "$ref": "#/components/responses/Error"
          },
          "415": {
            "$ref": "#/components/responses/Error"
          },
          "503": {
            "$ref": "#/components/responses/Error"
          }
        }
      }
    },
    "/v1/users/{user_id}/app-account-token": {
      "put": {
        "operationId": "bindAppAccountToken",
        "summary": "Bind the appAccountToken your app gives StoreKit to a user",
        "security": [
          {
            "clientKey": []
          },
          {}
        ],
        "parameters": [
          {
            "name": "user_id",
            "in": "path",
            "required": true,
            "description": "The game's user id: 1 to 128 printable ASCII characters.",
            "schema": {
              "type": "string",
              "minLength": 1,
              "maxLength": 128,
              "pattern": "^[ -~]+$"
            }
          }
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "type": "object",
                "required": [
                  "app_account_token"
                ],
                "properties": {
                  "app_account_token": {
                    "type": "string",
                    "format": "uuid"
                  }
                }
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "Bound",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/TokenBinding"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Error"
          },
          "401": {
            "$ref": "#/components/responses/Error"
          },
          "409": {
            "$ref": "#/components/responses/Error"
          },
          "413": {
            "$ref": "#/components/responses/Error"
          },
          "415": {
            "$ref": "#/components/responses/Error"
          },
          "503": {
            "$ref": "#/components/responses/Error"
          }
        }
      }
    },
    "/v1/users/{user_id}/consent": {
      "put": {
        "operationId": "setConsent",
        "summary": "Whether the user consented to consumption information being sent to Apple",
        "security": [
          {
            "clientKey": []
          },
          {}
        ],
        "parameters": [
          {
            "name": "user_id",
            "in": "path",
            "required": true,
            "description": "The game's user id: 1 to 128 printable ASCII characters.",
            "schema": {
              "type": "string",
              "minLength": 1,
              "maxLength": 128,
              "pattern": "^[ -~]+$"
            }
          }
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "type": "object",
                "required": [
                  "consented"
                ],
                "properties": {
                  "consented": {
                    "type": "boolean"
                  }
                }
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "Recorded",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Consent"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Error"
          },
          "401": {
            "$ref": "#/components/responses/Error"
          },
          "413": {
            "$ref": "#/components/responses/Error"
          },
          "415": {
            "$ref": "#/components/responses/Error"
          },
          "503": {
            "$ref": "#/components/responses/Error"
          }
        }
      }
    },
    "/v1/users/{user_id}/entitlements": {
      "get": {
        "operationId": "getEntitlements",
        "summary": "What the user is entitled to now",
        "security": [
          {
            "clientKey": []
          },
          {}
        ],
        "parameters": [
          {
            "name": "user_id",
            "in": "path",
            "required": true,
            "description": "The game's user id: 1 to 128 printable ASCII characters.",
            "schema": {
              "type": "string",
              "minLength": 1,
              "maxLength": 128,
              "pattern": "^[ -~]+$"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "The user's entitlements (an unknown user has none)",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Entitlements"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Error"
          },
          "401": {
            "$ref": "#/components/responses/Error"
          },
          "503": {
            "$ref": "#/components/responses/Error"
          }
        }
      }
    },
    "/healthz": {
      "get": {
        "operationId": "health",
        "summary": "The process is up",
        "responses": {
          "200": {
            "description": "Up",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Status"
                }
              }
            }
          }
        }
      }
    },
    "/readyz": {
      "get": {
        "operationId": "ready",
        "summary": "Redis answers",
        "responses": {
          "200": {
            "description": "Ready",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Status"
                }
              }
            }
          },
          "503": {
            "$ref": "#/components/responses/Error"
          }
        }
      }
    },
    "/metrics": {
      "get": {
        "operationId": "metrics",
        "summary": "Prometheus metrics",
        "responses": {
          "200": {
            "description": "Prometheus text format",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    },
    "/openapi.json": {
      "get": {
        "operationId": "openapi",
        "summary": "This document",
        "responses": {
          "200": {
            "description": "OpenAPI 3.1",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object"
                }
              }
            }
          }
        }
      }
    }
  },
  "components": {
    "securitySchemes": {
      "clientKey": {
        "type": "apiKey",
        "in": "header",
        "name": "X-IAP-Signature",
        "description": "HMAC-SHA256 of the request by a game backend's key (with X-IAP-Key and X-IAP-Timestamp); see docs/security.md"
      }
    },
    "responses": {
      "Error": {
        "description": "A precise error: its machine-readable code and a message",
        "headers": {
          "Retry-After": {
            "schema": {
              "type": "string"
            },
            "description": "With 429 and 503: when to try again (seconds)"
          }
        },
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      }
    },
    "schemas": {
      "Error": {
        "type": "object",
        "required": [
          "error"
        ],
        "properties": {
          "error": {
            "type": "object",
            "required": [
              "message"
            ],
            "properties": {
              "code": {
                "type": "string",
                "description": "malformed_json, missing_field, wrong_type, invalid_user_id, ticket_not_found, redis_unavailable, rate_limited, \u2026"
              },
              "message": {
                "type": "string"
              }
            }
          }
        }
      },
      "Submission": {
        "type": "object",
        "required": [
          "user_id"
        ],
        "description": "Exactly one piece of evidence: receipt_data, signed_transaction, or transaction_id alone (a lookup with the App Store Server API).",
        "properties": {
          "user_id": {
            "type": "string",
            "minLength": 1,
            "maxLength": 128,
            "pattern": "^[ -~]+$"
          },
          "receipt_data": {
            "type": "string",
            "description": "A legacy app receipt, base64"
          },
          "signed_transaction": {
            "type": "string",
            "description": "A StoreKit 2 signed transaction (compact JWS)"
          },
          "transaction_id": {
            "type": "string",
            "minLength": 1,
            "maxLength": 128
          },
          "product_id": {
            "type": "string",
            "minLength": 1,
            "maxLength": 128
          },
          "currency": {
            "type": "string",
            "pattern": "^[A-Z]{3}$",
            "description": "ISO 4217, for a legacy receipt"
          }
        }
      },
      "Accepted": {
        "type": "object",
        "required": [
          "ticket",
          "status"
        ],
        "properties": {
          "ticket": {
            "type": "string"
          },
          "status": {
            "$ref": "#/components/schemas/TicketStatus"
          }
        }
      },
      "TicketStatus": {
        "type": "string",
        "enum": [
          "queued",
          "verifying",
          "retrying",
          "held",
          "granted",
          "duplicate",
          "rejected",
          "dead",
          "applied"
        ]
      },
      "Ticket": {
        "type": "object",
        "required": [
          "ticket",
          "status"
        ],
        "properties": {
          "ticket": {
            "type": "string"
          },
          "status": {
            "$ref": "#/components/schemas/TicketStatus"
          },
          "reason": {
            "type": "string"
          },
          "result": {
            "type": "string"
          },
          "last_error": {
            "type": "string"
          },
          "environment": {
            "type": "string"
          },
          "attempts": {
            "type": "integer"
          },
          "created_at": {
            "type": "string"
          },
          "updated_at": {
            "type": "string"
          },
          "transactions": {
            "type": "array",
            "items": {
              "type": "object",
              "properties": {
                "transaction_id": {
                  "type": "string"
                },
                "original_transaction_id": {
                  "type": "string"
                },
                "product_id": {
                  "type": "string"
                },
                "quantity": {
                  "type": "integer"
                },
                "outcome": {
                  "type": "string",
                  "enum": [
                    "granted",
                    "duplicate",
                    "rejected",
                    "held",
                    "pending"
                  ]
                },
                "reason": {
                  "type": "string"
                }
              }
            }
          }
        }
      },
      "NotificationAccepted": {
        "type": "object",
        "required": [
          "ticket",
          "status"
        ],
        "properties": {
          "ticket": {
            "type": "string"
          },
          "status": {
            "type": "string",
            "enum": [
              "accepted",
              "seen_before"
            ]
          }
        }
      },
      "TokenBinding": {
        "type": "object",
        "required": [
          "user_id",
          "app_account_token"
        ],
        "properties": {
          "user_id": {
            "type": "string"
          },
          "app_account_token": {
            "type": "string"
          }
        }
      },
      "Consent": {
        "type": "object",
        "required": [
          "user_id",
          "consented"
        ],
        "properties": {
          "user_id": {
            "type": "string"
          },
          "consented": {
            "type": "boolean"
          }
        }
      },
      "Entitlements": {
        "type": "object",
        "required": [
          "user_id",
          "entitlements",
          "as_of"
        ],
        "properties": {
          "user_id": {
            "type": "string"
          },
          "as_of": {
            "type": "string"
          },
          "entitlements": {
            "type": "array",
            "items": {
              "type": "object",
              "required": [
                "entitlement",
                "product_id",
                "status",
                "original_transaction_id"
              ],
              "properties": {
                "entitlement": {
                  "type": "string"
                },
                "product_id": {
                  "type": "string"
                },
                "status": {
                  "type": "string",
                  "enum": [
                    "active",
                    "grace_period"
                  ]
                },
                "expires_at": {
                  "type": "string"
                },
                "original_transaction_id": {
                  "type": "string"
                }
              }
            }
          }
        }
      },
      "Status": {
        "type": "object",
        "required": [
          "status"
        ],
        "properties": {
          "status": {
            "type": "string"
          }
        }
      }
    }
  }
}

"""#
}
